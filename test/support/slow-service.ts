/**
 * A misbehaviour for the hostile service (hostile-service.ts): the route's requests are answered
 * after `latency(held)` ms, `held` being how many the service holds at that moment, as a service
 * that queues past a number of workers does. `seen.most` is the most it held at once.
 */
import type { ServerResponse } from 'node:http';
import type { HostileRequest, HostileRoute } from './hostile-service.js';

export function slowService(route: HostileRoute, latency: (held: number) => number) {
  const seen = { held: 0, most: 0 };
  const misbehave = (request: HostileRequest, res: ServerResponse) => {
    if (request.route !== route) return false;
    seen.held++;
    seen.most = Math.max(seen.most, seen.held);
    setTimeout(() => {
      seen.held--;
      if (route === 'storage') res.writeHead(200, { etag: '"1"' }).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
    }, latency(seen.held));
    return true;
  };
  return { seen, misbehave };
}
