/**
 * The recipes of docs/cli.md "Real exports", run verbatim: each file the section shows is written as
 * shown, each `$ push-api` line is run as written, and the records stored are checked field by field.
 */
import { writeFileSync } from 'node:fs';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import { emulatorEnv, killChildren, runCli } from '../support/cli/run.js';
import { readDoc } from '../support/doc-files.js';

const ctx = useCliFixture();
afterAll(killChildren);

interface Section {
  files: Map<string, string>;
  commands: string[][];
}

/** The section's files (a fenced block right after a line "`name`:" or "`name` (…):") and `$ push-api` lines. */
function realExports(): Section {
  const text = readDoc('docs/cli.md');
  const start = text.indexOf('\n## Real exports\n');
  const end = text.indexOf('\n## ', start + 1);
  const lines = text.slice(start, end).split('\n');
  const files = new Map<string, string>();
  const commands: string[][] = [];
  let pendingName: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const name = /^`([\w.-]+)`(?: \(.*\))?:$/.exec(line)?.[1];
    if (name !== undefined) {
      pendingName = name;
      continue;
    }
    if (line.startsWith('```') && pendingName !== undefined) {
      const body: string[] = [];
      for (i++; !(lines[i] as string).startsWith('```'); i++) body.push(lines[i] as string);
      files.set(pendingName, `${body.join('\n')}\n`);
      pendingName = undefined;
      continue;
    }
    if (line.startsWith('$ push-api ')) {
      const args = line.slice('$ push-api '.length).match(/"[^"]*"|\S+/g) ?? [];
      commands.push(args.map((arg) => arg.replace(/^"|"$/g, '')));
    }
  }
  return { files, commands };
}

const section = realExports();
const stored = () => ctx.emulator.mock.state.records(DEMO_APP_ID);

/** What each recipe stores, by the file it publishes. */
const EXPECTED: Record<string, unknown[]> = {
  'us-bank.csv': [
    {
      created: Date.parse('2025-01-31T13:15:00Z'),
      vendor: 'COFFEE ROASTERS #12',
      amount: -4.5,
      type: 'expense',
      currency: 'USD',
      identifier: 'checking-4411',
    },
    {
      created: Date.parse('2025-02-03T22:40:00Z'),
      vendor: 'OFFICE DEPOT 1104',
      amount: -1234,
      type: 'expense',
      currency: 'USD',
      identifier: 'checking-4411',
    },
  ],
  'kontoauszug.csv': [
    {
      created: Date.parse('2025-01-30T23:00:00Z'),
      vendor: 'Stadtwerke München',
      description: 'Strom Januar',
      amount: -1234.56,
      currency: 'EUR',
      type: 'expense',
      identifier: 'giro-1',
    },
    {
      created: Date.parse('2025-02-02T23:00:00Z'),
      vendor: 'Bürobedarf GmbH',
      description: 'Rechnung 4711',
      amount: -89.9,
      currency: 'EUR',
      type: 'expense',
      identifier: 'giro-1',
    },
  ],
  'excel-export.csv': [
    {
      created: Date.UTC(2025, 0, 31),
      amount: 1250,
      currency: 'EUR',
      identifier: 'jane@example.com',
      type: 'expense',
      vendor: 'Acme Ltd',
    },
  ],
  'card-feed.jsonl': [
    {
      created: Date.parse('2025-01-31T17:30:00Z'),
      amount: -19.99,
      currency: 'USD',
      identifier: 'jane@example.com',
      type: 'expense',
      vendor: 'Cloud Hosting Inc',
      transactionNumber: 'tx_1',
      description: 'card feed, line 1',
    },
  ],
};

describe('docs/cli.md "Real exports"', () => {
  it('has a recipe for each common shape, and the template', () => {
    const published = section.commands.filter((args) => args[1] === 'publish').map((args) => args.at(-1));
    expect(published).toEqual(Object.keys(EXPECTED));
    expect(section.commands.some((args) => args.join(' ') === 'finance template')).toBe(true);
    expect([...section.files.keys()]).toEqual([
      'us-bank.csv',
      'kontoauszug.csv',
      'excel-export.csv',
      'card-feed.jsonl',
      'card-feed.mjs',
    ]);
  });

  for (const args of section.commands.filter((candidate) => candidate[1] === 'publish')) {
    const file = args.at(-1) as string;
    it(`runs the recipe for ${file} as shown and stores exactly the records it describes`, async () => {
      for (const [name, text] of section.files) {
        // The Excel recipe's file is saved as Excel saves it: a byte-order mark and CRLF line ends.
        const excel = name === 'excel-export.csv';
        writeFileSync(ctx.temp.path(name), excel ? `\uFEFF${text.replaceAll('\n', '\r\n')}` : text);
      }
      const result = await runCli(ctx.cli, [...args, '--json'], { env: emulatorEnv(ctx.emulator), cwd: ctx.temp.dir });
      expect(result.stderr).not.toMatch(/push-api: /);
      expect(result.code).toBe(0);
      expect(stored()).toEqual(EXPECTED[file]);
    });
  }

  it('prints a template that publishes as it is', async () => {
    const env = emulatorEnv(ctx.emulator);
    const template = await runCli(ctx.cli, ['finance', 'template'], { env });
    const result = await runCli(ctx.cli, ['finance', 'publish', '--app', DEMO_APP_ID, '--format', 'csv', '-'], {
      env,
      stdin: template.stdout,
    });
    expect(result.code).toBe(0);
    expect(stored()).toHaveLength(1);
  });
});
