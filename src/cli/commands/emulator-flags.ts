/**
 * Readers for the `push-api emulator` flags that set it up from a shell: faults in a short
 * syntax, apps, allowed host names and the public address. Each throws commander's
 * InvalidArgumentError, so a bad value exits 2 with a message naming the flag.
 */
import { InvalidArgumentError } from 'commander';
import type { FaultRule } from '../../testing/faults.js';
import { normalizeHost } from '../../testing/host-guard.js';
import type { Operation } from '../../testing/state.js';

/** The operations a `--fault` names, as the shell spells them, and the emulator's names for them. */
const FAULT_OPERATIONS: Record<string, Operation> = {
  token: 'token',
  uploadUrls: 'upload-urls',
  upload: 'upload',
  finance: 'finance',
};

/**
 * The emulator's own spelling of an operation, as its request log and `POST /_emulator/faults`
 * write it: someone who read `upload-urls` there may well type it here.
 */
const EMULATOR_SPELLINGS: Record<string, Operation> = { 'upload-urls': 'upload-urls' };

export const FAULT_SYNTAX =
  'operation:status[:retry-after=N][:times=N] or operation:drop=before|after[:times=N], ' +
  `operation one of ${Object.keys(FAULT_OPERATIONS).join(', ')}`;

/** The operation a `--fault` names; own keys only, so that `constructor` or `toString` is no operation. */
function faultOperation(name: string): Operation | undefined {
  if (Object.hasOwn(FAULT_OPERATIONS, name)) return FAULT_OPERATIONS[name];
  return Object.hasOwn(EMULATOR_SPELLINGS, name) ? EMULATOR_SPELLINGS[name] : undefined;
}

function wholeNumber(text: string, what: string, min: number): number {
  if (!/^\d{1,9}$/.test(text) || Number(text) < min) {
    throw new InvalidArgumentError(`${what} must be a whole number >= ${min}; expected ${FAULT_SYNTAX}`);
  }
  return Number(text);
}

/**
 * Reads `finance:429:retry-after=1:times=3` or `upload:drop=after` into the rule `faults.add`
 * takes. The options may come in any order, each once.
 */
export function parseFault(spec: string): FaultRule {
  const [name = '', effect = '', ...options] = spec.trim().split(':');
  const operation = faultOperation(name);
  if (operation === undefined) {
    throw new InvalidArgumentError(`unknown operation ${JSON.stringify(name)}; expected ${FAULT_SYNTAX}`);
  }
  const rule: FaultRule = { match: { operation } };
  const drop = /^drop=(before|after)$/.exec(effect);
  if (drop) rule.drop = drop[1] as 'before' | 'after';
  else if (/^\d{3}$/.test(effect) && Number(effect) >= 200 && Number(effect) <= 599) rule.status = Number(effect);
  else throw new InvalidArgumentError(`expected a status (200-599) or drop=before|after after "${name}:"`);
  const seen = new Set<string>();
  for (const option of options) {
    const [key = '', value = ''] = option.split('=', 2);
    if (seen.has(key)) throw new InvalidArgumentError(`${key} is given twice; expected ${FAULT_SYNTAX}`);
    seen.add(key);
    if (key === 'times') rule.times = wholeNumber(value, 'times', 1);
    else if (key === 'retry-after' && rule.status !== undefined) rule.retryAfter = wholeNumber(value, 'retry-after', 0);
    else throw new InvalidArgumentError(`unknown part ${JSON.stringify(option)}; expected ${FAULT_SYNTAX}`);
  }
  return rule;
}

/** Commander's way of taking a flag more than once: each value is added to the list. */
export function collect<T>(parse: (value: string) => T): (value: string, previous: T[] | undefined) => T[] {
  return (value, previous) => [...(previous ?? []), parse(value)];
}

/** An app id goes into URL paths and terminal lines: printable, no slash, at most 200 characters. */
export function parseAppId(value: string): string {
  if (!/^[\x21-\x7e]{1,200}$/.test(value) || value.includes('/')) {
    throw new InvalidArgumentError('must be 1-200 printable characters without spaces or "/"');
  }
  return value;
}

export function parseAllowedHost(value: string): string {
  if (normalizeHost(value) === undefined) throw new InvalidArgumentError('must be a host name, such as emulator');
  return value;
}

export function parsePublicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be an absolute URL, such as http://emulator:4010');
  }
  const originOnly = url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '';
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !originOnly || url.password !== '') {
    throw new InvalidArgumentError('must be an http(s) origin without path, such as http://emulator:4010');
  }
  return url.origin;
}

export function parseClientId(value: string): string {
  if (!/^[\x21-\x7e]{1,200}$/.test(value)) throw new InvalidArgumentError('must be 1-200 printable characters');
  return value;
}
