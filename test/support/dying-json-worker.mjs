// A JSON-thread worker that dies as a crash would (the thread exits, code 3) while it holds a payload that holds
// the bytes "die-here", and is the real worker (infra/transport/json-thread-worker.mjs) for every other payload.
// Given to the host ({ jsonWorker }) by the tests of a command whose payload is lost with its thread. Modules are
// evaluated in import order: the listener that dies is registered before the real worker's, so it runs first.
import './die-on-json-mark.mjs';
import '../../infra/transport/json-thread-worker.mjs';
