/**
 * The build for workers and edge runtimes has no file system: a path is refused before any
 * request. Its twin, file-source.ts, reads files in the Node build (Node, Bun, Deno).
 */
import { ConfigurationError } from '../errors.js';
import type { UploadSource } from './put-body.js';

export async function fileUploadSource(filePath: string, name?: string): Promise<UploadSource> {
  throw new ConfigurationError(
    `Cannot upload ${JSON.stringify(name ?? filePath)} from the path ${JSON.stringify(filePath)}: this runtime has no file system ` +
      '(push-api-client was loaded for workers and edge runtimes). Pass the content instead: { name, data } or { name, stream, size }.',
  );
}
