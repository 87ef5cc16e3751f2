/**
 * The secret scrubber on hostile answers, against its baseline in the same run: the per-character
 * regex it replaced. A long access token (4 KiB) and an answer of ~300 KiB repeating near-copies of
 * it; the regex re-reads up to the token's length at each position, the linear scrubber does not.
 *
 *   npx tsx bench/scrub-secrets.ts            # every case, the regex included (about a minute)
 *   npx tsx bench/scrub-secrets.ts --no-regex # the linear scrubber only
 */
import { randomBytes } from 'node:crypto';
import { scrubSecrets } from '../src/internal/text.js';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function hexPattern(value: number, width: number): string {
  return [...value.toString(16).padStart(width, '0')]
    .map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit))
    .join('');
}

const SHORT: Record<string, string> = { '"': '\\\\"', '\\': '\\\\\\\\', '/': '\\\\/' };

/** The scrubber this package had before: one alternation per character of the secret. */
function regexScrub(text: string, secret: string): string {
  const chars = Array.from(secret, (char) => {
    const options = [escapeRegExp(char)];
    if (SHORT[char] !== undefined) options.push(SHORT[char]);
    options.push(
      Array.from({ length: char.length }, (_, i) => `\\\\[uU]${hexPattern(char.charCodeAt(i), 4)}`).join(''),
    );
    options.push(Array.from(new TextEncoder().encode(char), (byte) => `%${hexPattern(byte, 2)}`).join(''));
    if (char === ' ') options.push('\\+');
    return `(?:${options.join('|')})`;
  });
  return text.replace(new RegExp(chars.join(''), 'g'), '[redacted]');
}

function repeatTo(unit: string, bytes: number): string {
  return unit.repeat(Math.ceil(bytes / unit.length));
}

const BODY_BYTES = 300 * 1024;
const randomToken = randomBytes(3072).toString('base64url');
const cases = [
  {
    name: 'random 4 KiB token, near-copies (last character changed)',
    secret: randomToken,
    body: repeatTo(`${randomToken.slice(0, -1)}# `, BODY_BYTES),
  },
  {
    name: 'periodic 4 KiB token (a…a), near-copies',
    secret: 'a'.repeat(4096),
    body: repeatTo(`${'a'.repeat(4095)}#`, BODY_BYTES),
  },
  {
    name: 'periodic 4 KiB token (abab…), near-copies \\u-escaped',
    secret: 'ab'.repeat(2048),
    body: repeatTo(`${'a\\u0062'.repeat(2047)}a#`, BODY_BYTES),
  },
  {
    name: 'random token echoed 64 times, JSON-escaped, in an 8 MiB answer',
    secret: randomToken,
    body: repeatTo(`{"echo":"${randomToken.replace(/-/g, '\\u002d')}","pad":"${'x'.repeat(128 * 1024)}"}`, 8 << 20),
  },
];

function time(run: () => void): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

const withRegex = !process.argv.includes('--no-regex');
console.log('| case | body | linear scrubber (median of 5) | regex (before, one run) |');
console.log('|---|---|---|---|');
for (const { name, secret, body } of cases) {
  // The median of five runs: the first ones include compiling the code.
  const runs = Array.from({ length: 5 }, () => time(() => scrubSecrets(body, [secret]))).sort((a, b) => a - b);
  const linear = runs[2] as number;
  const regex = withRegex ? `${time(() => regexScrub(body, secret)).toFixed(0)} ms` : 'skipped';
  console.log(`| ${name} | ${(body.length / 1024).toFixed(0)} KiB | ${linear.toFixed(0)} ms | ${regex} |`);
}
