/**
 * Maps a URL to the operation it addresses. The three hosts may share one origin (the HTTP
 * emulator serves them under path prefixes), so the longest matching prefix wins.
 */
import { trimTrailingSlashes } from '../app-path.js';
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
    const prefix = this.#prefixes.find(
      (candidate) =>
        candidate.origin === url.origin &&
        (url.pathname === candidate.path || url.pathname.startsWith(`${candidate.path}/`)),
    );
    if (!prefix) return { kind: 'not-found' };
    const rest = url.pathname.slice(prefix.path.length);
    switch (prefix.host) {
      case 'auth':
        return rest === '/oauth2/token' ? { kind: 'token' } : { kind: 'not-found' };
      case 'upload':
        return { kind: 'upload', pathBelowPrefix: rest };
      case 'api': {
        const match = DATA_PATH.exec(rest);
        const appId = match?.[1] ? safeDecode(match[1]) : undefined;
        if (!match || appId === undefined || appId === '') return { kind: 'not-found' };
        return match[2] === 'upload' ? { kind: 'upload-urls', appId } : { kind: 'finance', appId };
      }
    }
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
