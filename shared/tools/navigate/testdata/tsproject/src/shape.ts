/** A plane figure. */
export interface Shape {
  /** Its area. */
  area(): number;
}
