/**
 * The `push-api` entry point. Its first act is to install the signal handlers; only then does it
 * load the program, whose modules (the SDK, commander, the readers) take a noticeable time to load:
 * a SIGINT or SIGTERM during that time, or at any later moment, ends the run with exit 130 and
 * under `--json` one JSON object, never by the signal. A reader of stdout or stderr that goes away
 * does not end it either: the run goes on without that stream.
 */
import { outliveClosedOutputs } from './closed-outputs.js';
import { installInterrupts } from './interrupts.js';

installInterrupts();
outliveClosedOutputs();

// A specifier the bundler leaves alone: the program is its own file, loaded after the handlers.
const programPath = './program.js';
const { run } = (await import(programPath)) as typeof import('./program.js');
const code = await run(process.argv);
// Exit explicitly: idle keep-alive sockets or a stdin left open must not keep a finished run alive.
// One turn later than the flushes, so that a stream's 'error' (a full disk under stdout) is heard first.
process.stdout.write('', () => process.stderr.write('', () => setImmediate(() => process.exit(code))));
