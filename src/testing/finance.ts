/**
 * `POST {base_url}/services/push/v1/customer/apps/{appId}/finance`: validates the batch and stores
 * it for the app. A batch with any invalid record is refused whole (422) and stores nothing.
 *
 * Order of checks: unexpected query parameter (400), declared or actual size over `maxBodyBytes`
 * (413, enforced while reading), content type other than JSON, invalid UTF-8, invalid JSON, and
 * the spec's property table (all 422).
 */
import { parseContentLength, readBodyWithLimit } from './body.js';
import type { EmulatorContext, IncomingRequest } from './context.js';
import { describeIssues, validateFinanceBody } from './finance-validation.js';
import { apiError, jsonResponse } from './responses.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export async function handleFinance(
  context: EmulatorContext,
  incoming: IncomingRequest,
  appId: string,
): Promise<Response> {
  const { request, url } = incoming;
  const { config, state, clock } = context;
  const firstParam = url.searchParams.keys().next();
  if (!firstParam.done) return apiError(400, `unexpected query parameter ${JSON.stringify(firstParam.value)}`);

  const declared = parseContentLength(request.headers.get('content-length'));
  if (declared !== undefined && declared > config.maxBodyBytes) {
    return apiError(413, `body exceeds ${config.maxBodyBytes} bytes`);
  }
  const mediaType = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') return apiError(422, 'content-type must be application/json');

  const body = await readBodyWithLimit(request, config.maxBodyBytes);
  if (!body.ok) {
    return body.reason === 'too-large'
      ? apiError(413, `body exceeds ${config.maxBodyBytes} bytes`)
      : apiError(400, 'request body ended early');
  }
  let text: string;
  try {
    text = utf8.decode(body.bytes);
  } catch {
    return apiError(422, 'body is not valid UTF-8');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return apiError(422, 'body is not valid JSON');
  }
  const result = validateFinanceBody(parsed);
  if (!result.ok) return apiError(422, describeIssues(result.issues));

  // A reset while the body arrived: answered as the service would, stored nowhere.
  if (state.isCurrent(incoming.generation)) {
    state.financeOf(appId).add(incoming.requestId, clock.now(), result.records, config.keepRecords);
  }
  return jsonResponse(200, { success: true });
}
