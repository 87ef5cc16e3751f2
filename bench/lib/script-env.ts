/**
 * What the hand-written baseline scripts (bench/children) share: their settings from the PUSH_*
 * variables the harness sets, and a plain client-credentials token request, as a user would write.
 */

export function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

export async function fetchToken(): Promise<string> {
  const response = await fetch(`${env('PUSH_AUTH_URL')}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: env('PUSH_CLIENT_ID'),
      client_secret: env('PUSH_CLIENT_SECRET'),
      scope: `${env('PUSH_SCOPE_BASE')}/connector.write`,
    }),
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

/** `{base}/services/push/v1/customer/apps/{appId}/{resource}` for the benchmark's app. */
export function appResource(resource: 'finance' | 'upload'): string {
  return `${env('PUSH_BASE_URL')}/services/push/v1/customer/apps/${encodeURIComponent(env('BENCH_APP_ID'))}/${resource}`;
}
