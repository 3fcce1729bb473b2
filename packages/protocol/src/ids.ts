/** Opaque, prefixed identifiers. The part after the prefix is 20 characters of random lowercase base32. */
export const idPrefixes = {
  user: "usr",
  project: "prj",
  device: "dev",
  token: "tok",
  audit: "aud",
  deployment: "dep",
} as const;

/** How many base32 characters follow an id's prefix and underscore. */
export const idLength = 20;

/** The shape of an id with this prefix: `prj_` then 20 characters of lowercase base32. */
export function idPattern(prefix: string): RegExp {
  return new RegExp(`^${prefix}_[a-z2-7]{${idLength}}$`);
}

declare const brand: unique symbol;
/** A string that the type checker keeps apart from other strings. */
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type UserId = Brand<string, "UserId">;
export type ProjectId = Brand<string, "ProjectId">;
export type DeviceId = Brand<string, "DeviceId">;
