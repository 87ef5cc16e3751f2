import { BlockList, isIP } from 'node:net';
import { domainToASCII } from 'node:url';

/** One `NO_PROXY` entry: a host name (and its subdomains), or addresses; a port when it named one. */
type Entry = { kind: 'name'; name: string; port: number } | { kind: 'addresses'; list: BlockList; port: number };

/** Which hosts `NO_PROXY` sends direct. */
export interface NoProxy {
  /** Whether a request to `url` goes direct, not through the proxy. */
  bypasses(url: URL): boolean;
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** `address` in a BlockList of its own family: one address, or a CIDR range when `prefix` is given. */
function addresses(address: string, prefix: number | undefined): BlockList | undefined {
  const family = isIP(address);
  if (family === 0) return undefined;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const list = new BlockList();
  if (prefix === undefined) list.addAddress(address, type);
  else if (Number.isInteger(prefix) && prefix >= 0 && prefix <= (family === 4 ? 32 : 128)) {
    list.addSubnet(address, prefix, type);
  } else return undefined;
  return list;
}

/**
 * One entry as curl, Go and Python read it: `host`, `.host` or `*.host` (the host and its
 * subdomains), `host:port`, an IPv6 address bare (`::1`) or in brackets (`[::1]`, `[::1]:8080`),
 * and a CIDR range (`10.0.0.0/8`, `fd00::/8`), which matches addresses written in the URL.
 */
function parseEntry(text: string): Entry | undefined {
  let host = text;
  let port = 0;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1] ?? '';
    port = Number(bracketed[2] ?? 0);
  } else if ((text.match(/:/g) ?? []).length === 1) {
    const [name = '', digits = ''] = text.split(':');
    if (!/^\d+$/.test(digits)) return undefined;
    host = name;
    port = Number(digits);
  }
  const [address = '', prefix] = host.split('/');
  if (prefix !== undefined || isIP(address) !== 0) {
    const list = addresses(
      address,
      prefix === undefined ? undefined : /^\d+$/.test(prefix) ? Number(prefix) : Number.NaN,
    );
    return list === undefined ? undefined : { kind: 'addresses', list, port };
  }
  const written = host
    .toLowerCase()
    .replace(/^\*?\./, '')
    .replace(/\.$/, '');
  // A URL's host name is in punycode (bücher.example is xn--bcher-kva.example), so an entry
  // written in Unicode is compared in that form too; one that has none matches nothing.
  const name = /[^ -~]/.test(written) ? domainToASCII(written) : written;
  return name === '' ? undefined : { kind: 'name', name, port };
}

/**
 * Reads a `NO_PROXY` value: entries split by commas or white space; `*` as any entry sends every
 * request direct. An entry none of the forms fits matches nothing, as in curl.
 */
export function parseNoProxy(value: string): NoProxy {
  const texts = value.split(/[\s,]+/).filter((text) => text !== '');
  if (texts.includes('*')) return { bypasses: () => true };
  const entries = texts.map(parseEntry).filter((entry) => entry !== undefined);
  return {
    bypasses(url) {
      const host = url.hostname
        .toLowerCase()
        .replace(/^\[(.*)\]$/, '$1')
        .replace(/\.$/, '');
      const port = Number(url.port) || DEFAULT_PORTS[url.protocol] || 0;
      const family = isIP(host);
      return entries.some((entry) => {
        if (entry.port !== 0 && entry.port !== port) return false;
        if (entry.kind === 'addresses') return family !== 0 && entry.list.check(host, family === 4 ? 'ipv4' : 'ipv6');
        return host === entry.name || host.endsWith(`.${entry.name}`);
      });
    },
  };
}
