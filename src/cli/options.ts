import { InvalidArgumentError } from 'commander';

/** A commander argument parser for a whole number in `[min, max]`; a bad value is a usage error (exit 2). */
export function integerOption(name: string, min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value: string) => {
    const number = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number < min || number > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
      throw new InvalidArgumentError(`${name} must be a whole number ${range}`);
    }
    return number;
  };
}

/** Options every command shares. */
export interface CommonFlags {
  json?: boolean;
  verbose?: boolean;
  quiet?: boolean;
}

/**
 * Commander quotes an unknown option as it was typed, `--name=value` included, and that value may
 * be a secret typed where it does not belong (`--client-secret=…`). Error text keeps only the name.
 */
export function redactOptionValues(text: string, argv: readonly string[]): string {
  let out = text;
  for (const arg of argv) {
    const eq = arg.indexOf('=');
    if (!arg.startsWith('-') || eq < 0) continue;
    const name = arg.slice(0, eq);
    out = out.split(`'${arg}'`).join(`'${name}' (values are not echoed)`).split(arg).join(name);
  }
  return out;
}
