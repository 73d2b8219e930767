interface Waiting<K, V> {
  key: K;
  resolve: (value: V | PromiseLike<V>) => void;
  reject: (err: unknown) => void;
}

/**
 * Loads keys in batches (ADR 0025). A key asked while fewer than `maxInFlight` batches are out
 * leaves at once, with the keys asked in the same turn of the event loop; a key asked while
 * `maxInFlight` batches are out waits for one of them to land and leaves with every key that
 * waited (at most `maxBatch` per call). At a low rate every key goes alone and waits for
 * nothing; under load one call carries many keys, so the cost per key falls as the rate rises.
 * `loadMany` answers the keys' values in their order (a value may be a promise of its own, so
 * that one key fails alone); when it fails, every key of its batch fails with its error.
 */
export class Coalescer<K, V> {
  private waiting: Array<Waiting<K, V>> = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly loadMany: (keys: K[]) => Promise<Array<V | Promise<V>>>,
    private readonly maxInFlight = 2,
    private readonly maxBatch = 500,
  ) {}

  load(key: K): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      this.waiting.push({ key, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.waiting.length === 0) return;
    this.scheduled = true;
    // setImmediate: the keys asked by every request read in this turn of the loop go together.
    setImmediate(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      this.inFlight += 1;
      let loading: Promise<Array<V | Promise<V>>>;
      try {
        loading = this.loadMany(batch.map((w) => w.key));
      } catch (err) {
        loading = Promise.reject(err);
      }
      loading
        .then((values) => {
          if (values.length !== batch.length) throw new Error(`a batch of ${batch.length} keys answered ${values.length} values`);
          batch.forEach((w, i) => w.resolve(values[i]));
        })
        .catch((err: unknown) => batch.forEach((w) => w.reject(err)))
        .finally(() => {
          this.inFlight -= 1;
          this.schedule();
        });
    }
  }
}
