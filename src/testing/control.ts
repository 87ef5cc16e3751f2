/**
 * The control routes of the HTTP emulator, for steering it from a shell or another container:
 * `POST /_emulator/faults` (one fault rule, as `faults.add` takes it), `DELETE /_emulator/faults`,
 * `POST /_emulator/reset` and `POST /_emulator/clock` (`{ "advanceMs": n }`). Every answer is JSON;
 * a bad body is a 400 naming the field.
 *
 * POSTs must say `Content-Type: application/json`: a page elsewhere can send a cross-site form POST
 * (a CORS "simple request") to 127.0.0.1 without asking, but never a JSON one, which needs a
 * preflight that the emulator does not grant.
 */
import type { z } from 'zod';
import { readBodyWithLimit } from './body.js';
import { type FaultRule, MAX_FAULT_RULES } from './faults.js';
import type { PushApiEmulator } from './handler.js';
import { apiError, jsonResponse } from './responses.js';

const FAULTS_PATH = '/_emulator/faults';
const RESET_PATH = '/_emulator/reset';
const CLOCK_PATH = '/_emulator/clock';
/** A fault rule is a few hundred bytes; anything near this cap is not one. */
const MAX_CONTROL_BODY_BYTES = 16 * 1024;

/** zod is loaded only when a control route is used: the emulator alone must not need it. */
function schemas(): Promise<typeof import('./control-schemas.js')> {
  return import('./control-schemas.js');
}

/** The spec's error shape; the message starts with the field at fault: `Bad Request: <field>: <why>`. */
function badRequest(field: string, detail: string): Response {
  return apiError(400, `${field}: ${detail}`);
}

function firstIssue(error: z.ZodError): Response {
  const issue = error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : 'body';
  const unknownKey = issue?.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  if (unknownKey !== undefined) {
    const prefix = issue && issue.path.length > 0 ? `${issue.path.join('.')}.` : '';
    return badRequest(`${prefix}${unknownKey}`, 'is not a field of this route');
  }
  return badRequest(field, issue?.message ?? 'is not valid');
}

async function jsonBody(request: Request): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    return { ok: false, response: apiError(415, 'control routes take Content-Type: application/json') };
  }
  const body = await readBodyWithLimit(request, MAX_CONTROL_BODY_BYTES);
  if (!body.ok) return { ok: false, response: apiError(413, `body over ${MAX_CONTROL_BODY_BYTES} bytes`) };
  const text = Buffer.from(body.bytes).toString('utf8');
  if (text.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, response: badRequest('body', 'is not valid JSON') };
  }
}

function methodNotAllowed(allow: string): Response {
  return apiError(405, `use ${allow}`, { allow });
}

async function faultsRoute(emulator: PushApiEmulator, request: Request): Promise<Response> {
  if (request.method === 'DELETE') {
    const cleared = emulator.faults.list().length;
    emulator.faults.clear();
    return jsonResponse(200, { cleared });
  }
  if (request.method !== 'POST') return methodNotAllowed('POST, DELETE');
  const body = await jsonBody(request);
  if (!body.ok) return body.response;
  const parsed = (await schemas()).faultRuleSchema.safeParse(body.value);
  if (!parsed.success) return firstIssue(parsed.error);
  if (emulator.faults.list().length >= MAX_FAULT_RULES) {
    return apiError(
      409,
      `the emulator holds at most ${MAX_FAULT_RULES} fault rules at once: DELETE ${FAULTS_PATH} clears them, or give one rule a number of times`,
    );
  }
  try {
    const handle = emulator.faults.add(parsed.data as FaultRule);
    return jsonResponse(201, { id: handle.id });
  } catch (error) {
    // faults.add refuses inconsistent rules (a status and a drop, no effect); its message names the field.
    return badRequest(faultField(parsed.data), error instanceof Error ? error.message : 'is not a valid fault');
  }
}

/** The field an inconsistent rule is blamed on: the one that conflicts, or the missing effect. */
function faultField(rule: FaultRule): string {
  if (rule.status !== undefined && rule.drop !== undefined) return 'drop';
  return 'status';
}

async function resetRoute(emulator: PushApiEmulator, request: Request): Promise<Response> {
  if (request.method !== 'POST') return methodNotAllowed('POST');
  const body = await jsonBody(request);
  if (!body.ok) return body.response;
  const parsed = (await schemas()).resetSchema.safeParse(body.value);
  if (!parsed.success) return firstIssue(parsed.error);
  emulator.clearReceived();
  return jsonResponse(200, { reset: true, apps: emulator.state.apps });
}

async function clockRoute(emulator: PushApiEmulator, request: Request): Promise<Response> {
  if (request.method !== 'POST') return methodNotAllowed('POST');
  const body = await jsonBody(request);
  if (!body.ok) return body.response;
  const parsed = (await schemas()).clockSchema.safeParse(body.value);
  if (!parsed.success) return firstIssue(parsed.error);
  emulator.advanceTime(parsed.data.advanceMs);
  return jsonResponse(200, { now: emulator.now() });
}

/** Answers a control route; undefined for any other path. */
export function handleControl(
  emulator: PushApiEmulator,
  request: Request,
  pathname: string,
): Promise<Response> | undefined {
  switch (pathname) {
    case FAULTS_PATH:
      return faultsRoute(emulator, request);
    case RESET_PATH:
      return resetRoute(emulator, request);
    case CLOCK_PATH:
      return clockRoute(emulator, request);
    default:
      return undefined;
  }
}
