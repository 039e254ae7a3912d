// What the TypeScript client scripts share: what the client saw during a step, with a way to wait for more.

/** Events recorded in arrival order; `waitFor` waits (at most `waitLimitMs`, a guard) until enough came. */
export class Events {
  constructor(waitLimitMs) {
    this.seen = [];
    this.wake = null;
    this.waitLimitMs = waitLimitMs;
  }

  record(event) {
    this.seen.push(event);
    if (this.wake !== null) this.wake();
  }

  /** Wait until count events were seen; false if they did not come within the guard. */
  async waitFor(count) {
    const limit = Date.now() + this.waitLimitMs;
    while (this.seen.length < count) {
      const left = limit - Date.now();
      if (left <= 0) return false;
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
    return true;
  }

  /** The events seen so far, forgotten here. */
  take() {
    const seen = this.seen;
    this.seen = [];
    return seen;
  }
}
