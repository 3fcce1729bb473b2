export type Rgb = [number, number, number];

/** WS2812 (NeoPixel) strips: the last pixels written to each pin. */
export class Ws2812 {
  readonly #strips = new Map<number, Rgb[]>();
  /** How many times each pin was written. */
  readonly writes = new Map<number, number>();

  write(pin: number, pixels: readonly Rgb[]): void {
    this.#strips.set(
      pin,
      pixels.map(([r, g, b]) => [r, g, b]),
    );
    this.writes.set(pin, (this.writes.get(pin) ?? 0) + 1);
  }

  /** The strip on `pin`, or undefined if it was never written. */
  pixels(pin: number): Rgb[] | undefined {
    return this.#strips.get(pin)?.map(([r, g, b]) => [r, g, b]);
  }
}
