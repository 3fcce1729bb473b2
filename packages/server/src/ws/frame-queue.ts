/** One stretch of time in which a device's frames came faster than they were handled. */
interface BackpressureEpisode {
  /** How often reading the socket was paused. */
  pauses: number;
  /** Frames that arrived from the first pause until the queue was empty again. */
  frames: number;
  /** From the first pause until the queue was empty again. */
  ms: number;
}

/** Shared by every queue of a server. */
export interface FrameQueueBounds {
  /** Reading pauses when this many frames (or bytes) wait, and resumes at the low marks. */
  highFrames: number;
  lowFrames: number;
  highBytes: number;
  lowBytes: number;
  now(): number;
}

/** One per connection: its socket and its logs. */
export interface FrameQueueHandler {
  pause(): void;
  resume(): void;
  onError(error: unknown): void;
  /** Once per episode, when the queue is empty again (or the socket closed). */
  onEpisode(episode: BackpressureEpisode): void;
}

interface Item {
  bytes: number;
  work: () => Promise<void>;
}

/**
 * A device's frames, handled one after another in the order they arrived. When too many wait,
 * reading the socket pauses (the device's TCP window fills and it slows down); nothing that was
 * read is dropped.
 */
export class FrameQueue {
  readonly #o: FrameQueueBounds;
  readonly #handler: FrameQueueHandler;
  /** Only while frames wait (an idle device holds no array). */
  #items: Item[] | null = null;
  #head = 0;
  #bytes = 0;
  #running = false;
  #paused = false;
  #episode: { start: number; pauses: number; frames: number } | null = null;
  /** Frames handled so far (the heartbeat tells a paused socket that makes progress from a stuck one). */
  handled = 0;
  /** Until this settles, nothing is handled (the device's previous connection's backlog). */
  #after: Promise<void> | undefined;
  /** Resolved when the queue is next empty (only while someone waits for that). */
  #idle: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(bounds: FrameQueueBounds, handler: FrameQueueHandler) {
    this.#o = bounds;
    this.#handler = handler;
  }

  get paused(): boolean {
    return this.#paused;
  }

  /** Frames waiting (not yet handled). */
  get length(): number {
    return (this.#items?.length ?? 0) - this.#head;
  }

  /** Handles nothing before `previous` settles (a rejection counts as settled). */
  after(previous: Promise<void>): void {
    this.#after = previous;
  }

  /** Settles once every frame pushed so far (and any pushed meanwhile) has been handled. */
  idle(): Promise<void> {
    if (!this.#running && this.length === 0) return Promise.resolve();
    if (!this.#idle) {
      let resolve = () => {};
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.#idle = { promise, resolve };
    }
    return this.#idle.promise;
  }

  push(bytes: number, work: () => Promise<void>): void {
    this.#items ??= [];
    this.#items.push({ bytes, work });
    this.#bytes += bytes;
    if (this.#episode) this.#episode.frames++;
    // (a new episode counts the frames already waiting, this one included)
    if (!this.#paused && (this.length >= this.#o.highFrames || this.#bytes >= this.#o.highBytes)) {
      this.#paused = true;
      this.#episode ??= { start: this.#o.now(), pauses: 0, frames: this.length };
      this.#episode.pauses++;
      this.#handler.pause();
    }
    if (!this.#running) void this.#drain();
  }

  /** The socket closed: what waits is still handled; an open episode is reported now. */
  closed(): void {
    this.#paused = false;
    this.#endEpisode();
  }

  async #drain(): Promise<void> {
    this.#running = true;
    if (this.#after) {
      const after = this.#after;
      this.#after = undefined;
      await after.catch(() => {});
    }
    while (this.#items && this.#head < this.#items.length) {
      const items = this.#items;
      const item = items[this.#head]!;
      items[this.#head++] = undefined as unknown as Item; // let the frame go
      if (this.#head > 1024 && this.#head * 2 > items.length) {
        this.#items = items.slice(this.#head);
        this.#head = 0;
      }
      this.#bytes -= item.bytes;
      try {
        await item.work();
      } catch (error) {
        this.#handler.onError(error);
      }
      this.handled++;
      if (this.#paused && this.length <= this.#o.lowFrames && this.#bytes <= this.#o.lowBytes) {
        this.#paused = false;
        this.#handler.resume();
      }
    }
    this.#items = null;
    this.#head = 0;
    this.#running = false;
    if (!this.#paused) this.#endEpisode();
    const idle = this.#idle;
    this.#idle = undefined;
    idle?.resolve();
  }

  #endEpisode(): void {
    const episode = this.#episode;
    if (!episode) return;
    this.#episode = null;
    this.#handler.onEpisode({
      pauses: episode.pauses,
      frames: episode.frames,
      ms: this.#o.now() - episode.start,
    });
  }
}
