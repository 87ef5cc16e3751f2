/**
 * Every boundary that reads outside text, fuzzed at length (the fast lane runs the same
 * properties briefly: boundaries.property.test.ts): a result or a typed error, never a crash.
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
const LONG = 300_000;

describe('hostile answers and values end in a result or a typed error (long runs)', () => {
  it(
    'property: token answers give a token or a PushError',
    async () => {
      await fuzzTokenAnswers(start, 400);
    },
    LONG,
  );

  it(
    'property: upload-address and finance answers give a result or a PushError, every record counted',
    async () => {
      await fuzzApiAnswers(start, 400);
    },
    LONG,
  );

  it(
    'property: storage answers to a PUT give an upload report or a PushError',
    async () => {
      await fuzzStorageAnswers(start, 200);
    },
    LONG,
  );

  it(
    'property: environment values give a client or a ConfigurationError',
    () => {
      fuzzEnvironment(1_000);
    },
    LONG,
  );

  it(
    'property: JSON and JSONL rows nested deep give rows or an InputError, each row serializable',
    async () => {
      await fuzzDeepRows(300);
    },
    LONG,
  );

  it(
    'property: checkpoint files of any content give a checkpoint or a UsageError',
    () => {
      fuzzCheckpointFiles(1_000, dir);
    },
    LONG,
  );
});
