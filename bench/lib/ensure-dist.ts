/** Some benchmarks run the built package (dist/): this rebuilds it (`npx tsup`) when src/ is newer. */
import { spawn } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { CLI_ENTRY, REPO_ROOT } from './paths.js';

async function newestMtime(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const { mtimeMs } = await stat(path.join(entry.parentPath, entry.name));
    newest = Math.max(newest, mtimeMs);
  }
  return newest;
}

export async function ensureBuiltPackage(log: (message: string) => void): Promise<void> {
  const built = await stat(CLI_ENTRY).catch(() => undefined);
  const source = await newestMtime(path.join(REPO_ROOT, 'src'));
  if (built && built.mtimeMs >= source) return;
  log(built ? 'dist/ is older than src/: rebuilding with npx tsup' : 'dist/ is missing: building with npx tsup');
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('npx', ['tsup'], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`npx tsup exited ${code}`);
}
