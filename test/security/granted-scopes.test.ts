/**
 * A token endpoint that lists a secret among the granted scopes: the access token it issues, or the
 * client secret it received. Granted scopes are shown (the "token acquired" log line, `push-api
 * token`), so a scope holding a secret is left out, while the token is used as issued.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  HOSTILE_APP_ID,
  HOSTILE_SECRET,
  HOSTILE_TOKEN,
  type HostileService,
  useHostileService,
} from '../support/hostile-service.js';
import { recordingLogger } from '../support/recorders.js';
import { financeRecords } from '../support/records.js';

const start = useHostileService();

/** A token endpoint granting `push.write` and whatever `extra` lists, built from the secret it received. */
function granting(extra: (secret: string) => string[]): Promise<HostileService> {
  return start((request, res) => {
    if (request.route !== 'token') return false;
    const secret = new URLSearchParams(request.body).get('client_secret') ?? '';
    const scope = ['push.write', ...extra(secret)].join(' ');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ access_token: HOSTILE_TOKEN, token_type: 'Bearer', expires_in: 3600, scope }));
    return true;
  });
}

/** `text` with every character written as a JSON `\u` escape. */
const unicodeEscaped = (text: string) =>
  Array.from(text, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

describe('granted scopes holding a secret are left out', () => {
  const echoes: [string, (secret: string) => string[]][] = [
    ['the issued token', () => [HOSTILE_TOKEN]],
    ['the issued token inside a scope, percent-encoded', () => [`https://x.test/${encodeURIComponent(HOSTILE_TOKEN)}`]],
    ['the client secret', (secret) => [`scope:${secret}`]],
  ];
  it.each(echoes)('%s: in no scope, log line or report; the token still used', async (_, extra) => {
    const service = await granting(extra);
    const logger = recordingLogger();
    const client = service.client({ logger, logLevel: 'debug' });
    const report = await client.finance.publish(HOSTILE_APP_ID, financeRecords(3));
    const token = await client.tokens.getToken();

    expect(report.recordsSent).toBe(3);
    expect(service.on('finance')[0]?.authorization).toBe(`Bearer ${HOSTILE_TOKEN}`);
    expect(token.scopes).toEqual(['push.write']);
    const acquired = logger.lines.find((line) => line.message.includes('token acquired'));
    expect(acquired?.fields?.scopes).toEqual(['push.write']);
    const warned = logger.lines.filter((line) => line.level === 'warn');
    expect(warned.map((line) => line.message)).toEqual(['push-api-client granted scopes holding a secret left out']);
    const seen = [inspect(logger.lines, { depth: Infinity }), JSON.stringify(token.scopes)].join('\n');
    for (const secret of [HOSTILE_TOKEN, encodeURIComponent(HOSTILE_TOKEN), HOSTILE_SECRET]) {
      expect(seen).not.toContain(secret);
    }
  });

  it('the client secret written as \\u escapes', async () => {
    const service = await start((request, res) => {
      if (request.route !== 'token') return false;
      const secret = new URLSearchParams(request.body).get('client_secret') ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        `{"access_token":"${HOSTILE_TOKEN}","token_type":"Bearer","expires_in":3600,"scope":"push.write ${unicodeEscaped(secret)}"}`,
      );
      return true;
    });
    const token = await service.client().tokens.getToken();
    expect(token.scopes).toEqual(['push.write']);
  });

  it('scopes holding no secret are kept as granted, and nothing is logged at warn', async () => {
    const service = await granting(() => ['push.read', 'https://x.test/ledger.write']);
    const logger = recordingLogger();
    const token = await service.client({ logger }).tokens.getToken();
    expect(token.scopes).toEqual(['push.write', 'push.read', 'https://x.test/ledger.write']);
    expect(logger.lines.filter((line) => line.level === 'warn')).toEqual([]);
  });
});
