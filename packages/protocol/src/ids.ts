/** Opaque, prefixed identifiers. The part after the prefix is 20 characters of random lowercase base32. */
export const idPrefixes = {
  user: "usr",
  project: "prj",
  device: "dev",
  token: "tok",
  audit: "aud",
} as const;

declare const brand: unique symbol;
/** A string that the type checker keeps apart from other strings. */
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type UserId = Brand<string, "UserId">;
export type ProjectId = Brand<string, "ProjectId">;
export type DeviceId = Brand<string, "DeviceId">;
