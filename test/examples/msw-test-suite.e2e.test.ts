/**
 * Runs the customer test suite of examples/msw-test-suite as part of `npm test`: importing it
 * registers its tests in this file.
 */
import '../../examples/msw-test-suite/pipeline.test.js';
