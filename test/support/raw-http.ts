import { request as httpRequest } from 'node:http';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One request over a real socket with exactly the headers given, `Host` included (fetch would set
 * its own): what a browser sends after DNS rebinding, or a shell script with curl.
 */
export function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; path?: string } = {},
): Promise<RawAnswer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname.replace(/^\[|\]$/g, ''),
        port: target.port,
        method: options.method ?? 'GET',
        path: options.path ?? `${target.pathname}${target.search}`,
        headers: options.headers,
        setHost: options.headers?.host === undefined,
        timeout: 5000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(options.body);
  });
}

export function json(answer: RawAnswer): Record<string, unknown> {
  return JSON.parse(answer.body) as Record<string, unknown>;
}
