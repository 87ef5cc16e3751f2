/**
 * Every boundary that reads outside text, fuzzed briefly (the end-to-end lane runs the same
 * properties at length: boundaries.e2e.test.ts): a result or a typed error, never a crash.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { useHostileService } from '../support/hostile-service.js';
import { fuzzApiAnswers, fuzzEnvironment, fuzzStorageAnswers, fuzzTokenAnswers } from './boundaries.js';
import { fuzzCheckpointFiles, fuzzDeepRows } from './file-boundaries.js';

const start = useHostileService();
const dir = mkdtempSync(join(tmpdir(), 'push-fuzz-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('hostile answers and values end in a result or a typed error', () => {
  it('property: token answers give a token or a PushError', async () => {
    await fuzzTokenAnswers(start, 25);
  });

  it('property: upload-address and finance answers give a result or a PushError, every record counted', async () => {
    await fuzzApiAnswers(start, 25);
  });

  it('property: storage answers to a PUT give an upload report or a PushError', async () => {
    await fuzzStorageAnswers(start, 15);
  });

  it('property: environment values give a client or a ConfigurationError', () => {
    fuzzEnvironment(40);
  });

  it('property: JSON and JSONL rows nested deep give rows or an InputError, each row serializable', async () => {
    await fuzzDeepRows(25);
  });

  it('property: checkpoint files of any content give a checkpoint or a UsageError', () => {
    fuzzCheckpointFiles(40, dir);
  });
});
