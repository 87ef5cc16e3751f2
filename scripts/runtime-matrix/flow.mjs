// The smoke flow every runtime runs against the emulator over real HTTP: a token, an upload of
// in-memory data (and of a file on disk where the runtime has files), a publish of 2,500 records.
// It prints what it saw, but the driver judges only by the emulator's state.
import { ConfigurationError, PushClient } from 'push-api-client';
import { MEMORY_FILE, makeRecords, patternBytes, RECORD_COUNT } from './shared.mjs';

/** `settings`: the emulator's PUSH_* values; `diskFile`: a path, or undefined where there are no files. */
export async function smokeFlow(settings, diskFile) {
  const client = new PushClient({ ...settings, env: {} });
  const seen = {};
  const token = await client.tokens.getToken();
  seen.token = token.tokenType;
  const uploads = [{ name: MEMORY_FILE.name, data: patternBytes(MEMORY_FILE.size, MEMORY_FILE.seed) }];
  if (diskFile !== undefined) uploads.push({ name: diskFile.name, path: diskFile.path });
  let progressEvents = 0;
  const report = await client.uploads.upload(settings.appId, uploads, { onProgress: () => progressEvents++ });
  seen.filesUploaded = report.filesUploaded;
  seen.uploadErrors = report.files.filter((file) => file.status !== 'uploaded').map((file) => file.error?.message);
  seen.progressEvents = progressEvents;
  if (diskFile === undefined) {
    // Without a file system, a path is refused before any request.
    const refused = await client.uploads.upload(settings.appId, ['/etc/hosts']).catch((error) => error);
    seen.pathRefused = refused instanceof ConfigurationError;
  }
  const published = await client.finance.publish(settings.appId, makeRecords(RECORD_COUNT));
  seen.recordsSent = published.recordsSent;
  return seen;
}
