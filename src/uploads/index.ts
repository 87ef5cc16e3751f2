/** The uploader's public surface, for `src/index.ts` to re-export. */
export { MAX_UPLOAD_BYTES } from './limits.js';
export type {
  GetUploadUrlsOptions,
  UploadDataInput,
  UploadFileResult,
  UploadFileType,
  UploadInput,
  UploadOptions,
  UploadPathInput,
  UploadProgress,
  UploadReport,
  UploadStreamInput,
} from './types.js';
export { Uploader } from './uploader.js';
