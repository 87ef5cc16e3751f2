/**
 * The CLI as another local user can run it. Tests that start it under another uid (only root can)
 * cannot rely on the checkout: a clone in a directory only its owner may enter (`/root/...`), or
 * a Node.js that `npx -p node@24` keeps under `/root/.npm`, is out of that user's reach, and the
 * child would fail before running a line. So the CLI is bundled whole, its dependencies included,
 * into a world-readable temporary directory, with a copy of the running Node.js beside it when the
 * user could not execute the original.
 */
import { accessSync, chmodSync, constants, copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { build } from 'tsup';
import { afterAll, beforeAll } from 'vitest';
import { cliBuildOptions } from './build.js';

export interface CliForAnotherUser {
  /** The Node.js binary to start. */
  node: string;
  /** The bundled CLI. */
  cli: string;
}

/**
 * For a test file: the CLI built for another user before its tests, and removed after them (the
 * directory may hold a copy of Node.js, a hundred megabytes, that must not pile up in /tmp).
 */
export function useCliForAnotherUser(): () => CliForAnotherUser {
  let built: { dir: string; cli: CliForAnotherUser } | undefined;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'push-api-cli-other-user-'));
    built = { dir, cli: { node: '', cli: '' } };
    built.cli = await buildInto(dir);
  }, 120_000);
  afterAll(() => {
    if (built !== undefined) rmSync(built.dir, { recursive: true, force: true });
  });
  return () => {
    if (built === undefined || built.cli.cli === '') throw new Error('the CLI for another user is built in beforeAll');
    return built.cli;
  };
}

async function buildInto(dir: string): Promise<CliForAnotherUser> {
  chmodSync(dir, 0o755);
  await build({
    ...cliBuildOptions(dir),
    platform: 'node',
    // Everything in the bundle: the other user may not reach this checkout's node_modules.
    noExternal: [/./],
    // CommonJS dependencies call require(), which an ES module has to be given.
    banner: {
      js: "import { createRequire as __cliRequire } from 'node:module'; const require = __cliRequire(import.meta.url);",
    },
  });
  let node = process.execPath;
  if (!othersCanRun(node)) {
    node = join(dir, 'node');
    copyFileSync(process.execPath, node);
    chmodSync(node, 0o755);
  }
  return { node, cli: join(dir, 'cli', 'main.js') };
}

/** Whether users other than the owner may execute `file`: it is world-executable, and so is every directory above it. */
function othersCanRun(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    if ((statSync(file).mode & 0o001) === 0) return false;
    for (let dir = dirname(file); ; dir = dirname(dir)) {
      if ((statSync(dir).mode & 0o001) === 0) return false;
      if (dirname(dir) === dir) return true;
    }
  } catch {
    return false;
  }
}
