/**
 * Maps a URL to the operation it addresses. The three hosts may share one origin (the HTTP
 * emulator serves them under path prefixes), or even one address: a service may answer
 * `{auth_url}/oauth2/token` and `{base_url}/services/push/v1/...` on the same host. So the token
 * and data paths are tried first, under every prefix that matches, longest first; the storage host,
 * which takes any path below its prefix, only then, the longest matching prefix winning.
 */
import { trimTrailingSlashes } from '../internal/text.js';
import type { ResolvedOptions } from './options.js';

export type Route =
  | { kind: 'token' }
  | { kind: 'upload-urls'; appId: string }
  | { kind: 'finance'; appId: string }
  | { kind: 'upload'; pathBelowPrefix: string }
  | { kind: 'not-found' };

const DATA_PATH = /^\/services\/push\/v1\/customer\/apps\/([^/]+)\/(upload|finance)$/;

interface Prefix {
  host: 'auth' | 'api' | 'upload';
  origin: string;
  path: string;
}

export class Router {
  readonly #prefixes: Prefix[];

  constructor(config: Pick<ResolvedOptions, 'authUrl' | 'baseUrl' | 'uploadUrl'>) {
    const prefixes: Prefix[] = [
      { host: 'auth', ...split(config.authUrl) },
      { host: 'api', ...split(config.baseUrl) },
      { host: 'upload', ...split(config.uploadUrl) },
    ];
    this.#prefixes = prefixes.sort((a, b) => b.path.length - a.path.length);
  }

  route(url: URL): Route {
    const matching = this.#prefixes.filter(
      (candidate) =>
        candidate.origin === url.origin &&
        (url.pathname === candidate.path || url.pathname.startsWith(`${candidate.path}/`)),
    );
    for (const prefix of matching) {
      const rest = url.pathname.slice(prefix.path.length);
      if (prefix.host === 'auth' && rest === '/oauth2/token') return { kind: 'token' };
      if (prefix.host !== 'api') continue;
      const match = DATA_PATH.exec(rest);
      if (!match) continue;
      const appId = match[1] ? safeDecode(match[1]) : undefined;
      if (appId === undefined || appId === '') return { kind: 'not-found' };
      return match[2] === 'upload' ? { kind: 'upload-urls', appId } : { kind: 'finance', appId };
    }
    const storage = matching.find((candidate) => candidate.host === 'upload');
    if (storage) return { kind: 'upload', pathBelowPrefix: url.pathname.slice(storage.path.length) };
    return { kind: 'not-found' };
  }
}

function split(address: string): { origin: string; path: string } {
  const url = new URL(address);
  return { origin: url.origin, path: trimTrailingSlashes(url.pathname) };
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
