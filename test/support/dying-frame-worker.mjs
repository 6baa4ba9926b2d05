// A frame-thread worker that dies as a crash would (the thread exits, code 3) on a frame whose payload holds
// the bytes "die-here", and is the real worker (infra/transport/frame-thread-worker.mjs) for every other frame.
// Given to FrameThread / SocketBus ({ frameWorker }) by the tests of a frame lost with its thread. Modules are
// evaluated in import order: the listener that dies is registered before the real worker's, so it runs first.
import './die-on-frame-mark.mjs';
import '../../infra/transport/frame-thread-worker.mjs';
