import { ConfigurationError } from './errors.js';

/** The per-application resources of the data API (SPEC.md): upload addresses and finance records. */
export type AppResource = 'upload' | 'finance';

/**
 * `{base_url}/services/push/v1/customer/apps/{appId}/{resource}`. The app id is one percent-encoded
 * path segment, so `../x` or `a/b?c` can never change the path; `.` and `..` are refused because URL
 * parsers resolve them (even encoded as `%2E`) as dot segments. A base path is kept; its query and
 * fragment are dropped, since they would otherwise end up before the app path.
 */
export function appResourceUrl(baseUrl: URL, appId: string, resource: AppResource): URL {
  if (typeof appId !== 'string' || appId === '' || appId === '.' || appId === '..') {
    throw new ConfigurationError(`appId must be a non-empty application id, got ${JSON.stringify(appId)}`);
  }
  let segment: string;
  try {
    segment = encodeURIComponent(appId);
  } catch (cause) {
    throw new ConfigurationError('appId must be well-formed Unicode (it contains an unpaired surrogate)', { cause });
  }
  const base = new URL(baseUrl.href);
  base.search = '';
  base.hash = '';
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return new URL(`services/push/v1/customer/apps/${segment}/${resource}`, base);
}

/**
 * `text` without the trailing `/` characters. Written as a loop because `/\/+$/` is quadratic: the
 * regex engine tries the run of slashes from every position in it, and a URL taken from the
 * environment or a configuration file may hold a long one.
 */
export function trimTrailingSlashes(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x2f) end--;
  return text.slice(0, end);
}
