/** One Queue message per delivery (a row of `addon_deliveries`): an event for an integration. */
export interface DeliveryMessage {
  deliveryId: number;
  /** How many times it was put back to wait for an earlier event of the same flag. */
  waits?: number;
}
