/**
 * Fires once when nothing touched it for `idleMs` while armed. One timer is
 * re-armed lazily on expiry (not on every touch), so touching per chunk costs
 * a clock read, not a timer.
 */
export class IdleWatchdog {
  private lastTouch = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly idleMs: number,
    private readonly onIdle: () => void,
  ) {}

  /** Starts (or restarts) the idle clock from now. */
  arm(): void {
    this.disarm();
    this.touch();
    this.schedule(this.idleMs);
  }

  disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  touch(): void {
    this.lastTouch = performance.now();
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      const idleFor = performance.now() - this.lastTouch;
      if (idleFor >= this.idleMs) {
        this.timer = undefined;
        this.onIdle();
      } else {
        this.schedule(this.idleMs - idleFor);
      }
    }, delayMs);
    this.timer.unref();
  }
}
