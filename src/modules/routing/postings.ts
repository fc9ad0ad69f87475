// The router index's inverted lists: for each feature, the routes or documents holding it and
// their weights, in typed arrays that grow by doubling.

/** A growable list of (slot, weight) pairs. */
export class Postings {
  slots = new Int32Array(2);
  weights = new Float32Array(2);
  length = 0;

  push(slot: number, weight: number): void {
    if (this.length === this.slots.length) {
      const slots = new Int32Array(this.length * 2);
      slots.set(this.slots);
      this.slots = slots;
      const weights = new Float32Array(this.length * 2);
      weights.set(this.weights);
      this.weights = weights;
    }
    this.slots[this.length] = slot;
    this.weights[this.length] = weight;
    this.length += 1;
  }

  /** Adds `weight` to the entry of `slot` (routes: at most a few hundred entries per list). */
  addTo(slot: number, weight: number): number {
    for (let index = 0; index < this.length; index += 1) {
      if (this.slots[index] === slot) {
        const before = this.weights[index]!;
        this.weights[index] = before + weight;
        return before;
      }
    }
    this.push(slot, weight);
    return 0;
  }
}
