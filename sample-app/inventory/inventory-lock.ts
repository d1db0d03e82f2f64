/** The lock key of one SKU (the library hash-tags and prefixes it). */
export function lockKey(sku: string): string {
  return `inventory:${sku}`;
}
