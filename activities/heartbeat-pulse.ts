/**
 * An operator's pause, reset or cancel reaches a running attempt only in the
 * answer to a heartbeat the worker sends (held back by the SDK for up to
 * WORKER_HEARTBEAT_THROTTLE). An activity that heartbeats only between its
 * steps would hear of it only once a slow call ended; the call would then go
 * on, and a create made meanwhile would be kept. So while `run` runs, the last
 * details are heartbeated again every `everyMs` (the SDK sends at most one
 * per throttle interval), and the abort that follows cuts the call short.
 */
export const HEARTBEAT_PULSE_MS = 1000;

export async function withHeartbeatPulse<T>(beat: () => void, everyMs: number, run: () => Promise<T>): Promise<T> {
  const pulse = setInterval(beat, everyMs);
  try {
    return await run();
  } finally {
    clearInterval(pulse);
  }
}
