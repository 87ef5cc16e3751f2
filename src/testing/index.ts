/**
 * `push-api-client/testing`: an emulated push service for tests.
 *
 * - `createPushApiHandler`: the core fetch handler, no dependencies beyond Node.
 * - `startEmulator`: the same over real HTTP.
 *
 * The msw adapter, `createPushApiMock`, lives in `push-api-client/testing/msw`: this entry never
 * loads msw (an optional peer dependency) nor refers to its types.
 */
export type { WireInfo } from './context.js';
export type { FaultHandle, FaultMatch, FaultRule } from './faults.js';
export { FaultInjector, seededRandom } from './faults.js';
export type { FinanceDelivery, FinanceRecord } from './finance-store.js';
export { MAX_RECORDS_PER_REQUEST } from './finance-validation.js';
export type { EmulatorClientOptions, EmulatorFetch, HandleOptions, PushApiEmulator } from './handler.js';
export { createPushApiHandler } from './handler.js';
export type { CredentialInput, EmulatorOptions, RateLimit } from './options.js';
export {
  DEMO_APP_ID,
  DEMO_CLIENT_ID,
  DEMO_CLIENT_SECRET,
  DEMO_SCOPE_BASE,
  EMULATOR_DEFAULTS,
  SCOPE_NAMES,
} from './options.js';
export type { RecordPage, RecordPageEntry, RecordPageQuery } from './record-page.js';
export type { RunningEmulator, StartEmulatorOptions } from './server.js';
export { startEmulator } from './server.js';
export type {
  CredentialView,
  EmulatorStateView,
  Operation,
  RequestLogEntry,
  StoredFile,
  TokenRecord,
  UploadStorageView,
} from './state.js';
