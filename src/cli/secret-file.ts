/**
 * Where the CLI reads the client secret from: a file or a pipe named by `--client-secret-file`, or
 * stdin. Nothing a path can name may stall or flood the run: the file is opened without waiting (a
 * FIFO nobody writes to would otherwise hold one of libuv's threads, and with it the process's exit
 * after a signal), read only as a regular file or a pipe (never a device: `/dev/zero` has no end),
 * and never past {@link MAX_SECRET_BYTES}. Messages never name the path: a secret pasted in its
 * place would be printed.
 */
import {
  close as closeCallback,
  constants,
  fstat as fstatCallback,
  open as openCallback,
  read as readCallback,
} from 'node:fs';
import { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { UsageError } from './exit-codes.js';

/** Far more than any client secret; a file past it is not a secret file. */
const MAX_SECRET_BYTES = 64 * 1024;

const openFd = promisify(openCallback);
const fstat = promisify(fstatCallback);
const readFd = promisify(readCallback);
const closeFd = promisify(closeCallback);

const OPTION = '--client-secret-file';

/** The text of the secret file (or pipe) at `path`, up to {@link MAX_SECRET_BYTES}. */
export async function readSecretFile(path: string): Promise<string> {
  let fd: number;
  try {
    fd = await openFd(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw cannotRead(error);
  }
  let owned = true;
  try {
    const info = await fstat(fd);
    if (info.isFile()) return await readRegular(fd);
    if (info.isFIFO()) {
      // A pipe (process substitution `<(vault read …)`, a named FIFO): read by the event loop as its
      // writer sends, so a signal can still end the run while it waits.
      owned = false;
      const text = await readBounded(new Socket({ fd, readable: true, writable: false }), OPTION);
      if (text === '')
        throw new UsageError(`nothing came through the pipe given to ${OPTION} (is a program writing to it?)`);
      return text;
    }
    throw new UsageError(`the file given to ${OPTION} is not a regular file or a pipe`);
  } finally {
    if (owned) await closeFd(fd).catch(() => undefined);
  }
}

/** Everything `stream` gives, up to {@link MAX_SECRET_BYTES}; destroyed, and refused, past it. */
export async function readBounded(stream: Readable, source: string): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of stream) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      length += bytes.length;
      if (length > MAX_SECRET_BYTES) throw tooLarge(source);
      chunks.push(bytes);
    }
  } catch (error) {
    stream.destroy();
    if (error instanceof UsageError) throw error;
    throw cannotRead(error);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readRegular(fd: number): Promise<string> {
  const buffer = Buffer.alloc(MAX_SECRET_BYTES + 1);
  let length = 0;
  try {
    while (length < buffer.length) {
      const { bytesRead } = await readFd(fd, buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
  } catch (error) {
    throw cannotRead(error);
  }
  if (length > MAX_SECRET_BYTES) throw tooLarge(OPTION);
  return buffer.toString('utf8', 0, length);
}

function cannotRead(error: unknown): UsageError {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  return new UsageError(`cannot read the file given to ${OPTION} (${code})`);
}

function tooLarge(source: string): UsageError {
  return new UsageError(
    `${source}: more than ${MAX_SECRET_BYTES / 1024} KiB; the secret is the first line of a small file`,
  );
}
