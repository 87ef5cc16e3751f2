/**
 * The SDK and testing-kit reference pages against the code a user calls: the error table of
 * docs/configuration.md against the exported error classes and the fields each declares, the
 * literal defaults of its options table and of the publishing and upload examples, the constants
 * and error classes the pages name, the report fields of outcomes.md and uploads.md, the hook
 * events, and testing.md's table of emulator options. What is left out on purpose is listed, with
 * why. docs/cli.md is held to the CLI by cli-reference.test.ts.
 */
import * as sdk from 'push-api-client';
import * as testingKit from 'push-api-client/testing';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { DEFAULTS, FINANCE_DEFAULTS } from '../../src/defaults.js';
import { DEFAULT_UPLOAD_CONCURRENCY } from '../../src/uploads/limits.js';
import { interfaceKeys, literalsOf, sourceOf } from '../support/declarations.js';
import { readDoc } from '../support/doc-files.js';

/** The rows of docs/configuration.md's table of error classes: class → its "Carries" cell. */
function errorTable(): Map<string, string> {
  const page = readDoc('docs/configuration.md');
  const start = page.indexOf('\n## Errors\n');
  expect(start).toBeGreaterThan(-1);
  const rows = new Map<string, string>();
  for (const line of page.slice(start).split('\n')) {
    const cells = /^\| `(\w+)` \|.*\|\s*(.*?)\s*\|$/.exec(line);
    if (cells?.[1]) rows.set(cells[1], cells[2] ?? '');
  }
  return rows;
}

/** The error classes `push-api-client` exports. */
function exportedErrorClasses(): string[] {
  return Object.entries(sdk)
    .filter(([, value]) => typeof value === 'function' && value.prototype instanceof Error)
    .map(([name]) => name);
}

/**
 * The public instance fields each error class of src/errors.ts declares itself (not `name`, and
 * not those it inherits), and every field its instances have, inherited ones included.
 */
function declaredErrorFields(): Map<string, { own: string[]; all: Set<string> }> {
  const { checker, source } = sourceOf('src/errors.ts');
  const fields = new Map<string, { own: string[]; all: Set<string> }>();
  for (const statement of source.statements) {
    if (!ts.isClassDeclaration(statement) || statement.name === undefined) continue;
    const own = statement.members.flatMap((member) => {
      if (!ts.isPropertyDeclaration(member) || !ts.isIdentifier(member.name)) return [];
      const modifiers = ts.getCombinedModifierFlags(member);
      if (modifiers & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) return [];
      return member.name.text === 'name' ? [] : [member.name.text];
    });
    const instance = checker.getTypeAtLocation(statement);
    const all = new Set(checker.getPropertiesOfType(instance).map((symbol) => symbol.getName()));
    fields.set(statement.name.text, { own, all });
  }
  return fields;
}

/** The field names a "Carries" cell gives: its backticked words that are identifiers. */
function carried(cell: string): string[] {
  return [...cell.matchAll(/`([a-zA-Z]\w*)[^`]*`/g)].flatMap((match) => match[1] ?? []);
}

/** Words of a "Carries" cell that are no field: types, a class, `error`'s values, a header it leaves out. */
const NOT_FIELDS = new Set([
  'PublishReport',
  'UploadReport',
  'PushApiError',
  'invalid_token_response',
  'insufficient_scope',
  'http_error',
  'location',
]);

describe("docs/configuration.md's error table", () => {
  it('lists exactly the error classes push-api-client exports', () => {
    expect([...errorTable().keys()].sort()).toEqual(exportedErrorClasses().sort());
  });

  const declared = declaredErrorFields();

  it('names only fields each class has', () => {
    const unknown = [...errorTable()].flatMap(([name, cell]) =>
      carried(cell)
        .filter((field) => !NOT_FIELDS.has(field) && !declared.get(name)?.all.has(field))
        .map((field) => `${name}.${field}`),
    );
    expect(unknown).toEqual([]);
  });

  it("names every field a class declares (or says it is as PushApiError's)", () => {
    const table = errorTable();
    const parentFields = new Set(carried(table.get('PushApiError') ?? ''));
    const missing = [...table].flatMap(([name, cell]) => {
      const given = new Set(carried(cell));
      const inherits = cell.includes('as `PushApiError`');
      return (declared.get(name)?.own ?? [])
        .filter((field) => !given.has(field) && !(inherits && parentFields.has(field)))
        .map((field) => `${name}.${field}`);
    });
    expect(missing).toEqual([]);
  });

  it('finds the fields of the classes it checks', () => {
    expect(declared.get('TokenError')?.own).toEqual(expect.arrayContaining(['error', 'status', 'requestId']));
    expect(declared.get('PushApiError')?.all.has('message')).toBe(true);
  });
});

describe('literal defaults in the docs are the code defaults', () => {
  /** Option → its Default cell, for rows whose default is one code literal. */
  function literalDefaults(): Map<string, string> {
    const page = readDoc('docs/configuration.md');
    const start = page.indexOf('\n## Options and environment variables\n');
    const table = page.slice(start, page.indexOf('\n### ', start));
    expect(start).toBeGreaterThan(-1);
    const rows = new Map<string, string>();
    for (const line of table.split('\n')) {
      const cells = /^\| `(\w+)` \|[^|]*\|\s*`([^`]+)`\s*\|/.exec(line);
      if (cells?.[1] && cells[2]) rows.set(cells[1], cells[2]);
    }
    return rows;
  }

  it("configuration.md's options table", () => {
    const shown = Object.fromEntries(literalDefaults());
    const expected = {
      timeoutMs: String(DEFAULTS.timeoutMs),
      maxRetries: String(DEFAULTS.maxRetries),
      backoff: `{ initialDelayMs: ${DEFAULTS.retryInitialDelayMs}, maxDelayMs: ${DEFAULTS.retryMaxDelayMs} }`,
      maxRetryAfterMs: String(DEFAULTS.maxRetryAfterMs),
      retryAmbiguous: String(DEFAULTS.retryAmbiguous),
      tokenAuthMethod: `'${DEFAULTS.tokenAuthMethod}'`,
      allowInsecureHttp: String(DEFAULTS.allowInsecureHttp),
      dangerouslyAllowBrowser: String(DEFAULTS.dangerouslyAllowBrowser),
      middleware: '[]',
      tracing: 'false',
      env: 'process.env',
    };
    expect(shown).toEqual(expected);
    // A template literal in a code span needs a double-backtick span around it.
    expect(readDoc('docs/configuration.md')).toContain(
      `| \`scopes\` | | \`\`[\`\${scopeBase}${DEFAULTS.scopeSuffix}\`]\`\` |`,
    );
  });

  it("publishing.md's example options", () => {
    const page = readDoc('docs/publishing.md');
    expect(page).toContain(`batchSize: ${FINANCE_DEFAULTS.batchSize},`);
    expect(page).toContain('maxBatchBytes: 5 * 1024 ** 2,');
    expect(5 * 1024 ** 2).toBe(FINANCE_DEFAULTS.maxBatchBytes);
    expect(page).toContain(`concurrency: ${FINANCE_DEFAULTS.concurrency},`);
    expect(page).toContain(`onInvalid: '${FINANCE_DEFAULTS.onInvalid}',         // or 'skip'`);
    expect(page).toContain(`adaptive: ${FINANCE_DEFAULTS.adaptive},`);
    expect(page).toContain(
      `\`rateLimitDeadlineMs\` (default ${FINANCE_DEFAULTS.rateLimitDeadlineMs / 60_000} minutes)`,
    );
  });

  it("uploads.md's example options", () => {
    expect(readDoc('docs/uploads.md')).toContain(
      `concurrency: ${DEFAULT_UPLOAD_CONCURRENCY},          // most PUTs in flight (default ${DEFAULT_UPLOAD_CONCURRENCY})`,
    );
  });
});

/** The proxy variables the CLI and undici read: the environment's, not this package's. */
const PROXY_VARIABLES = new Set(['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY']);

describe('constants the docs name', () => {
  it('every UPPER_CASE name in code spans of the user docs is exported', () => {
    const exported = new Set([...Object.keys(sdk), ...Object.keys(testingKit)]);
    const pages = [
      'README.md',
      ...['configuration', 'publishing', 'uploads', 'outcomes', 'testing', 'cli'].map((page) => `docs/${page}.md`),
    ];
    const named = pages.flatMap((page) =>
      [...readDoc(page).matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`/g)].map((match) => ({
        page,
        name: match[1] ?? '',
      })),
    );
    // Environment variables and warning codes are names of another kind.
    const constants = named.filter(({ name }) => !name.startsWith('PUSH_') && !PROXY_VARIABLES.has(name));
    expect(constants.filter(({ name }) => !exported.has(name))).toEqual([]);
  });

  it('every error class the user docs name is exported, or is one the CLI names in its reports', () => {
    const exported = new Set(Object.keys(sdk));
    // The CLI's own, named in its output and --json reports; RangeError is JavaScript's; the two
    // Publish… classes are named only in outcomes.md's table of what replaced them.
    const elsewhere = new Set([
      'InputChangedError',
      'UnwritableOutputError',
      'RangeError',
      'PublishAbortedError',
      'PublishInterruptedError',
    ]);
    const pages = [
      'README.md',
      ...['configuration', 'publishing', 'uploads', 'outcomes', 'testing', 'cli'].map((page) => `docs/${page}.md`),
    ];
    const named = new Set(
      pages.flatMap((page) => [...readDoc(page).matchAll(/`([A-Z][A-Za-z]*Error)`/g)].map((match) => match[1] ?? '')),
    );
    expect([...named].filter((name) => !exported.has(name) && !elsewhere.has(name))).toEqual([]);
    const migration = readDoc('docs/outcomes.md').slice(
      readDoc('docs/outcomes.md').indexOf('### Migrating from the earlier errors'),
    );
    expect(migration).toContain('`PublishAbortedError`');
    expect(exported.has('PublishAbortedError')).toBe(false);
  });

  it('finds the environment variables the docs name, and only those the code reads', () => {
    const src = ['src/defaults.ts', 'src/cli/config.ts'].map(readDoc).join('\n');
    const pages = ['README.md', 'docs/configuration.md', 'docs/cli.md', 'docs/testing.md'].map(readDoc).join('\n');
    const variables = new Set(pages.match(/\bPUSH_[A-Z_]+/g) ?? []);
    variables.delete('PUSH_API_INSECURE_HTTP'); // the SecurityWarning's code, not a variable
    expect([...variables].filter((name) => !src.includes(`'${name}'`))).toEqual([]);
  });
});

describe('report fields', () => {
  it("outcomes.md's report shape names exactly the fields of PublishReport and its parts", () => {
    const page = readDoc('docs/outcomes.md');
    const start = page.indexOf('## The report');
    const block = page.slice(page.indexOf('```text\n', start), page.indexOf('\n```\n', start));
    const shown = new Set(block.match(/\b[a-zA-Z]\w*(?=\??[,:}\s])/g) ?? []);
    for (const word of ['text', 'sent', 'failed', 'unknown', 'see', 'below']) shown.delete(word);
    const fields = new Set([
      ...interfaceKeys('src/finance/types.ts', 'PublishReport'),
      ...interfaceKeys('src/finance/types.ts', 'BatchReport'),
      'path', // RecordIssue, of src/errors.ts
      'message',
      'issues',
      'index',
    ]);
    expect([...shown].filter((word) => !fields.has(word))).toEqual([]);
    expect([...fields].filter((field) => !shown.has(field))).toEqual([]);
  });

  it("uploads.md's report table names exactly the fields of UploadReport and UploadFileResult", () => {
    const page = readDoc('docs/uploads.md');
    const rows = page.split('\n').filter((line) => line.startsWith('| `files') || line.startsWith('| `stoppedBy'));
    const shown = new Set(
      rows.flatMap((row) =>
        [...(row.split(' | ')[0] ?? '').matchAll(/`(?:files\[\]\.)?(\w+)`/g)].map((match) => match[1]),
      ),
    );
    // `files[].name` shows `files` as well as `name`.
    if (rows.some((row) => row.includes('`files[].'))) shown.add('files');
    const fields = new Set([
      ...interfaceKeys('src/uploads/types.ts', 'UploadReport'),
      ...interfaceKeys('src/uploads/types.ts', 'UploadFileResult'),
    ]);
    expect([...shown].sort()).toEqual([...fields].sort());
  });
});

describe("configuration.md's hook events", () => {
  const page = readDoc('docs/configuration.md');
  const hooks = page.slice(page.indexOf('\n### Hooks\n'), page.indexOf('\n### Middleware\n'));
  const file = 'src/http/public-types.ts';

  it('names the hooks PushClientHooks has', () => {
    const named = /`hooks` \| \| none \| (.*?) callbacks/.exec(page)?.[1] ?? '';
    expect([...named.matchAll(/`(\w+)`/g)].map((match) => match[1]).sort()).toEqual(
      interfaceKeys(file, 'PushClientHooks').sort(),
    );
  });

  it("shows the concurrency event's fields and reasons as ConcurrencyHookEvent declares them", () => {
    const shape = /`\{ (operation: [^}]*) \}`/.exec(hooks)?.[1] ?? '';
    const fields = [...shape.matchAll(/(?:^|, )(\w+)\??(?=[:,]|$)/g)].map((match) => match[1]);
    expect(fields.sort()).toEqual(interfaceKeys(file, 'ConcurrencyHookEvent').sort());
    const reasons = literalsOf(file, 'ConcurrencyHookEvent', 'reason');
    expect(reasons.length).toBeGreaterThan(3);
    for (const reason of reasons) expect(hooks).toContain(`\`${reason}\``);
  });

  it('names every reason of a tokenRefresh event', () => {
    const shown = /`tokenRefresh` for each token requested\s+\(([^)]*)\)/.exec(hooks)?.[1] ?? '';
    expect([...shown.matchAll(/`([\w-]+)`/g)].map((match) => match[1]).sort()).toEqual(
      literalsOf(file, 'TokenRefreshHookEvent', 'reason').sort(),
    );
  });

  it('names the operations a middleware context gives', () => {
    const middleware = page.slice(page.indexOf('\n### Middleware\n'), page.indexOf('\n### Tracing\n'));
    const shown = /`operation` is (.*?),\s+and `attempt`/s.exec(middleware)?.[1] ?? '';
    const operations = middlewareOperations();
    expect(operations.length).toBeGreaterThan(3);
    expect([...shown.matchAll(/`(\w+)`/g)].map((match) => match[1]).sort()).toEqual(operations.sort());
  });
});

/** The operations of MiddlewareContext, from src/http/attempt.ts's `MiddlewareOperation`. */
function middlewareOperations(): string[] {
  const text = readDoc('src/http/attempt.ts');
  const union = /export type MiddlewareOperation =([^;]*);/.exec(text)?.[1] ?? '';
  return [...union.matchAll(/'(\w+)'/g)].map((match) => match[1] ?? '');
}

describe("testing.md's emulator options table", () => {
  /** Option → its default cell. */
  function rows(): Map<string, string> {
    const page = readDoc('docs/testing.md');
    const start = page.indexOf('\n### Options\n');
    expect(start).toBeGreaterThan(-1);
    const table = new Map<string, string>();
    for (const line of page.slice(start, page.indexOf('\n## ', start)).split('\n')) {
      const cells = /^\| `(\w+)` \| (.*?) \|/.exec(line);
      if (cells?.[1]) table.set(cells[1], cells[2] ?? '');
    }
    return table;
  }

  it('has one row per option of createPushApiHandler and startEmulator', () => {
    const options = new Set([
      ...interfaceKeys('src/testing/options.ts', 'EmulatorOptions'),
      ...interfaceKeys('src/testing/server.ts', 'StartEmulatorOptions'),
    ]);
    expect([...rows().keys()].sort()).toEqual([...options].sort());
  });

  it('gives the defaults of EMULATOR_DEFAULTS', () => {
    const table = rows();
    const MiB = 1024 ** 2;
    const shown: Record<string, string> = {
      authUrl: `'${testingKit.EMULATOR_DEFAULTS.authUrl}'`,
      baseUrl: `'${testingKit.EMULATOR_DEFAULTS.baseUrl}'`,
      uploadUrl: `'${testingKit.EMULATOR_DEFAULTS.uploadUrl}'`,
      scopeBase: `'${testingKit.EMULATOR_DEFAULTS.scopeBase}'`,
      apps: `['${testingKit.DEMO_APP_ID}']`,
      tokenTtlSeconds: String(testingKit.EMULATOR_DEFAULTS.tokenTtlSeconds),
      signedUrlTtlSeconds: String(testingKit.EMULATOR_DEFAULTS.signedUrlTtlSeconds),
      maxBodyBytes: `${testingKit.EMULATOR_DEFAULTS.maxBodyBytes / MiB} MiB`,
      maxUploadBytes: `${testingKit.EMULATOR_DEFAULTS.maxUploadBytes / 1024 ** 3} GiB`,
      maxStoredUploadBytes: `${testingKit.EMULATOR_DEFAULTS.maxStoredUploadBytes / MiB} MiB`,
      maxRequestLog: String(testingKit.EMULATOR_DEFAULTS.maxRequestLog),
      maxRequestLogBytes: `${testingKit.EMULATOR_DEFAULTS.maxRequestLogBytes / MiB} MiB`,
      lenientScope: String(testingKit.EMULATOR_DEFAULTS.lenientScope),
    };
    for (const [option, value] of Object.entries(shown)) {
      expect(table.get(option)?.replaceAll('`', ''), option).toBe(value);
    }
  });
});

describe("testing.md's controls", () => {
  const page = readDoc('docs/testing.md');
  /** The names inside the `{ … }` of a control written `name({ a, b })` in the page. */
  const fieldsOf = (call: string) =>
    (new RegExp(`\`${call}\\(\\{ ([^}]*) \\}\\)\``).exec(page)?.[1] ?? '').split(', ').filter(Boolean);

  it('faults.add shows every field of FaultRule', () => {
    expect(fieldsOf('faults.add').sort()).toEqual(interfaceKeys('src/testing/faults.ts', 'FaultRule').sort());
  });

  it('clientOptions() shows every field of EmulatorClientOptions', () => {
    const shown = /`clientOptions\(\)` \| `\{ ([^}]*) \}`/.exec(page)?.[1]?.split(', ') ?? [];
    expect(shown.sort()).toEqual(interfaceKeys('src/testing/handler.ts', 'EmulatorClientOptions').sort());
  });
});
