/**
 * Which `Host` names the HTTP emulator answers. A web page in the developer's browser can point a
 * name it controls at 127.0.0.1 (DNS rebinding) and then read the emulator as its own origin; the
 * browser still sends that name in `Host`, so refusing unknown names closes the hole. The port is
 * not compared: a rebinding page can only choose the name.
 */

/** Names every emulator accepts, whatever it was started with. */
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * A host name in the form the WHATWG URL parser gives `hostname` (lower case, IPv6 in brackets,
 * IPv4 spellings normalized), or undefined when `value` is not a bare `host[:port]`.
 */
export function normalizeHost(value: string): string | undefined {
  const trimmed = value.trim();
  if (trimmed === '' || /[\s/?#@\\]/.test(trimmed)) return undefined;
  // A bare IPv6 address (`::`, `::1`) as given to --host has no brackets.
  const bracketed = !trimmed.startsWith('[') && (trimmed.match(/:/g)?.length ?? 0) > 1 ? `[${trimmed}]` : trimmed;
  try {
    const url = new URL(`http://${bracketed}`);
    return url.hostname === '' ? undefined : url.hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** The accepted `Host` names of one emulator: loopback names, plus those it was started for. */
export class HostAllowList {
  readonly #names: ReadonlySet<string>;

  /**
   * @param extra the bind address, the public URL's host and every allowed host; each a host name,
   *   optionally with a port.
   * @throws {TypeError} an entry is not a host name, naming it.
   */
  constructor(extra: readonly string[]) {
    const names = new Set(LOOPBACK_NAMES);
    for (const entry of extra) {
      const name = normalizeHost(entry);
      if (name === undefined) throw new TypeError(`allowed host ${JSON.stringify(entry)} is not a host name`);
      names.add(name);
    }
    this.#names = names;
  }

  /** Whether a request's `Host` header names this emulator. A missing header is refused. */
  acceptsHost(header: string | undefined): boolean {
    if (header === undefined) return false;
    const name = normalizeHost(header);
    return name !== undefined && this.#names.has(name);
  }

  /**
   * Whether a browser's `Origin` header comes from a page on this emulator (the inspector) or from
   * no page at all (absent). Another origin, `null` included, is a page elsewhere that must not
   * steer or read the emulator even when it reaches it by an accepted name such as 127.0.0.1.
   */
  acceptsOrigin(header: string | undefined): boolean {
    if (header === undefined) return true;
    try {
      const url = new URL(header);
      return (url.protocol === 'http:' || url.protocol === 'https:') && this.#names.has(url.hostname.toLowerCase());
    } catch {
      return false;
    }
  }

  /** The accepted names, for messages. */
  get names(): string[] {
    return [...this.#names];
  }
}
