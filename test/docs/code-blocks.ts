/**
 * Extracts the TypeScript code blocks of a Markdown file and type-checks them against the
 * package's source, with the repository's compiler options. Each block is checked as its own ES
 * module (`export {}` is appended), so blocks do not see each other's declarations. Snippets may use
 * the free names declared in PRELUDE (`client`, `appId`, `records`, `signal`) without declaring them.
 */
import { join } from 'node:path';
import ts from 'typescript';

export interface CodeBlock {
  /** Markdown file the block came from, for messages. */
  file: string;
  /** 1-based line of the first code line in that file. */
  line: number;
  code: string;
}

const TS_LANGUAGES = new Set(['ts', 'typescript', 'mts']);

/** The ```ts (or ~~~ts, ```typescript) blocks of a Markdown text; other languages are skipped. */
export function extractTsBlocks(markdown: string, file: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split(/\r?\n/);
  let open: { fence: string; language: string; start: number; body: string[] } | undefined;
  lines.forEach((text, index) => {
    if (!open) {
      const match = /^ {0,3}(`{3,}|~{3,})\s*([\w-]*)/.exec(text);
      if (match?.[1]) open = { fence: match[1], language: (match[2] ?? '').toLowerCase(), start: index + 2, body: [] };
      return;
    }
    const closing = new RegExp(`^ {0,3}${open.fence[0] === '`' ? '`' : '~'}{${open.fence.length},}\\s*$`);
    if (closing.test(text)) {
      if (TS_LANGUAGES.has(open.language)) blocks.push({ file, line: open.start, code: open.body.join('\n') });
      open = undefined;
      return;
    }
    open.body.push(text);
  });
  return blocks;
}

/** Names a README snippet may use without declaring them. */
export const PRELUDE = `import type { FinanceRecordInput, PushClient } from 'push-api-client';
declare global {
  const client: PushClient;
  const appId: string;
  const records: FinanceRecordInput[];
  const signal: AbortSignal;
  const stopSignal: AbortSignal;
}
export {};
`;

/** Type errors of each block, as `file:line:column message`, with lines of the Markdown file. */
export function typeCheckBlocks(blocks: readonly CodeBlock[], root: string): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error('tsconfig.json could not be read');
  const options: ts.CompilerOptions = { ...parsed.options, noEmit: true };
  // Virtual files inside the repository, so that node_modules, package.json `type` and paths resolve.
  const dir = join(root, '.docs-blocks');
  const virtual = new Map<string, string>([[join(dir, 'prelude.d.ts'), PRELUDE]]);
  const names = blocks.map((block, index) => {
    const name = join(dir, `block-${index}.ts`);
    virtual.set(name, `${block.code}\nexport {};\n`);
    return name;
  });
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, onError, create) => {
    const text = virtual.get(name);
    return text === undefined
      ? getSourceFile(name, version, onError, create)
      : ts.createSourceFile(name, text, version);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => virtual.has(name) || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => virtual.get(name) ?? readFile(name);
  host.directoryExists = (name) => name === dir || ts.sys.directoryExists(name);
  const program = ts.createProgram({ rootNames: [join(dir, 'prelude.d.ts'), ...names], options, host });

  const errors: string[] = [];
  names.forEach((name, index) => {
    const block = blocks[index] as CodeBlock;
    const source = program.getSourceFile(name);
    const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    for (const diagnostic of diagnostics) {
      const at =
        diagnostic.file && diagnostic.start !== undefined
          ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
          : { line: 0, character: 0 };
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
      errors.push(`${block.file}:${block.line + at.line}:${at.character + 1} TS${diagnostic.code}: ${message}`);
    }
  });
  return errors;
}
