import type { Row } from '../lib/row.js';
import type { TempFiles } from '../lib/temp-files.js';

export interface BenchContext {
  quick: boolean;
  temp: TempFiles;
  /** Progress lines, on stderr so that stdout holds only the table. */
  log(message: string): void;
}

export interface Benchmark {
  /** For `--only`. */
  name: string;
  title: string;
  run(ctx: BenchContext): Promise<Row[]>;
}
