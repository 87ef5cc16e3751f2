/** Command-line options of `bench/run.ts`. */

export interface BenchArgs {
  /** Smaller sizes and fewer rounds, for CI smoke runs (under 2 minutes). */
  quick: boolean;
  /** Run only these benchmarks (by name); all when empty. */
  only: string[];
  /** Leave these benchmarks out (by name). */
  skip: string[];
  /** Where the JSON results go. */
  out: string;
}

export const DEFAULT_OUT = 'bench/results/latest.json';
/** Quick runs are smoke tests: they must not overwrite the full run that docs/performance.md quotes. */
export const QUICK_OUT = 'bench/results/quick.json';

/**
 * Benchmarks whose full runs keep their own results file, quoted by their own docs section: run
 * alone, they must not replace the full run of every benchmark in latest.json.
 */
export const OWN_RESULTS: Readonly<Record<string, string>> = { network: 'bench/results/network.json' };

export function parseArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = { quick: false, only: [], skip: [], out: '' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') args.quick = true;
    else if (arg === '--only' || arg === '--skip' || arg === '--out') {
      const value = argv[++i];
      if (value === undefined || value.startsWith('--')) throw new Error(`${arg} needs a value`);
      if (arg === '--out') args.out = value;
      else args[arg === '--only' ? 'only' : 'skip'].push(...value.split(',').filter((name) => name !== ''));
    } else if (arg === '--help' || arg === '-h') {
      throw new Error(
        'usage: tsx bench/run.ts [--quick] [--only <name>[,<name>]] [--skip <name>[,<name>]] [--out <file>]',
      );
    } else {
      throw new Error(`unknown argument ${arg}; try --help`);
    }
  }
  const own = args.only.length === 1 ? OWN_RESULTS[args.only[0] as string] : undefined;
  if (args.out === '') args.out = args.quick ? QUICK_OUT : (own ?? DEFAULT_OUT);
  return args;
}
