import { useEffect } from "react";

/** Sets the document title ("Greenhouse · sdk"). */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · sdk` : "sdk";
  }, [title]);
}
