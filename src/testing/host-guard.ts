/**
 * Which `Host` names the HTTP emulator answers. A web page in the developer's browser can point a
 * name it controls at 127.0.0.1 (DNS rebinding) and then read the emulator as its own origin; the
 * browser still sends that name in `Host`, so refusing unknown names closes the hole. The port of
 * `Host` is not compared: a rebinding page can only choose the name. The port of `Origin` is: a
 * page on another local port is another server's page.
 *
 * A browser sends no `Origin` with a GET it makes for an `<img>`, a `<script>` or a `no-cors`
 * fetch, so the `Origin` check alone lets any page make the emulator do work for it (scan a
 * million records, hold an event stream). Browsers send `Sec-Fetch-Site` to loopback addresses
 * (a secure context) on every request, and that header says whose page it came from.
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

/** The origin a request was addressed to over plain http: `http://` and its `Host` header, normalized. */
function addressedOrigin(host: string | undefined): string | undefined {
  if (host === undefined || normalizeHost(host) === undefined) return undefined;
  try {
    return new URL(`http://${host.trim()}`).origin;
  } catch {
    return undefined;
  }
}

/**
 * Whether a request's Fetch Metadata headers allow it: absent (no browser: the SDK, curl), the
 * emulator's own page (`same-origin`), a person's own action (`none`: typed in the address bar,
 * a bookmark), or a top-level navigation from elsewhere to the inspector page (`toPage`: a link
 * to it in a README). A page on another site or another local port (`cross-site`, `same-site`) may
 * make no other request. Nor may it navigate elsewhere: a page can navigate itself (`location = …`)
 * without a click, and a navigation to a service route used up a fault the developer had set and
 * counted in the request log; one to the event stream held a stream slot for as long as it ran.
 */
export function acceptsFetchSite(
  site: string | undefined,
  mode: string | undefined,
  dest: string | undefined,
  toPage = false,
): boolean {
  if (site === undefined) return true;
  const value = site.trim().toLowerCase();
  if (value === 'same-origin' || value === 'none') return true;
  return toPage && mode?.trim().toLowerCase() === 'navigate' && dest?.trim().toLowerCase() === 'document';
}

/** The accepted `Host` names of one emulator: loopback names, plus those it was started for. */
export class HostAllowList {
  readonly #names: ReadonlySet<string>;
  readonly #publicOrigin: string | undefined;

  /**
   * @param extra the bind address, the public URL's host and every allowed host; each a host name,
   *   optionally with a port.
   * @param publicOrigin the `publicUrl` origin, when the emulator was given one: pages are served
   *   there too, perhaps through a proxy that changes the scheme or the port.
   * @throws {TypeError} an entry is not a host name, naming it.
   */
  constructor(extra: readonly string[], publicOrigin?: string) {
    const names = new Set(LOOPBACK_NAMES);
    for (const entry of extra) {
      const name = normalizeHost(entry);
      if (name === undefined) throw new TypeError(`allowed host ${JSON.stringify(entry)} is not a host name`);
      names.add(name);
    }
    this.#names = names;
    this.#publicOrigin = publicOrigin === undefined ? undefined : new URL(publicOrigin).origin;
  }

  /** Whether a request's `Host` header names this emulator. A missing header is refused. */
  acceptsHost(header: string | undefined): boolean {
    if (header === undefined) return false;
    const name = normalizeHost(header);
    return name !== undefined && this.#names.has(name);
  }

  /**
   * Whether a browser's `Origin` header comes from a page on this emulator (the inspector) or from
   * no page at all (absent). A page on this emulator has the origin its request was addressed to
   * (`http://` and the `Host` header, name and port), or the `publicUrl` origin. Any other origin
   * is a page elsewhere that must not steer or read the emulator, even when it reaches it by an
   * accepted name: `null`, another site, and another port of an accepted name, which is another
   * local server (a dev server on `localhost:9999` runs whatever script it was given).
   */
  acceptsOrigin(origin: string | undefined, host: string | undefined): boolean {
    if (origin === undefined) return true;
    let page: URL;
    try {
      page = new URL(origin);
    } catch {
      return false;
    }
    if (page.protocol !== 'http:' && page.protocol !== 'https:') return false;
    return page.origin === this.#publicOrigin || page.origin === addressedOrigin(host);
  }

  /** The accepted names, for messages. */
  get names(): string[] {
    return [...this.#names];
  }
}
