/** Raw requests to an in-process emulator, as a client other than the SDK would send them. */
import type { PushApiEmulator } from 'push-api-client/testing';

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
export const JSON_TYPE = { 'content-type': 'application/json' };

export function tokenRequest(emulator: PushApiEmulator, params: Record<string, string>, headers = {}): Request {
  return new Request(`${emulator.authUrl}/oauth2/token`, {
    method: 'POST',
    headers: { ...FORM, ...headers },
    body: new URLSearchParams(params),
  });
}

/** Obtains a token with the emulator's first credential (every demo scope unless `scope` is given). */
export async function getToken(emulator: PushApiEmulator, scope?: string): Promise<string> {
  const params: Record<string, string> = {
    grant_type: 'client_credentials',
    client_id: emulator.clientId,
    client_secret: emulator.clientSecret,
  };
  params.scope =
    scope ??
    emulator.state.credentials.find((credential) => credential.clientId === emulator.clientId)!.scopes.join(' ');
  const response = await emulator.handle(tokenRequest(emulator, params));
  if (response.status !== 200) throw new Error(`token request failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

export function dataUrl(emulator: PushApiEmulator, operation: 'upload' | 'finance', appId = emulator.appId): string {
  return `${emulator.baseUrl}/services/push/v1/customer/apps/${encodeURIComponent(appId)}/${operation}`;
}

export function financeRequest(
  emulator: PushApiEmulator,
  token: string | undefined,
  body: unknown,
  options: { appId?: string; headers?: Record<string, string>; raw?: BodyInit } = {},
): Request {
  return new Request(dataUrl(emulator, 'finance', options.appId), {
    method: 'POST',
    headers: { ...JSON_TYPE, ...(token ? { authorization: `Bearer ${token}` } : {}), ...options.headers },
    body: options.raw ?? JSON.stringify(body),
    duplex: 'half',
  } as RequestInit);
}

export function uploadUrlsRequest(emulator: PushApiEmulator, token: string | undefined, query: string, appId?: string) {
  return new Request(`${dataUrl(emulator, 'upload', appId)}${query}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
}

export interface ErrorBody {
  code: string;
  message: string;
  success: boolean;
}

/** Reads a spec-shaped error and checks its shape matches the status. */
export async function specError(response: Response): Promise<ErrorBody> {
  const body = (await response.json()) as ErrorBody;
  if (body.code !== String(response.status) || body.success !== false || typeof body.message !== 'string') {
    throw new Error(`not the spec error shape: ${JSON.stringify(body)}`);
  }
  return body;
}

/** Gets signed addresses for `names` and returns them as a map. */
export async function signedUrls(emulator: PushApiEmulator, token: string, names: string[], type?: string) {
  const query = new URLSearchParams(names.map((name) => ['filenames', name]));
  if (type) query.append('type', type);
  const response = await emulator.handle(uploadUrlsRequest(emulator, token, `?${query}`));
  if (response.status !== 200) throw new Error(`upload urls failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, string>;
}
