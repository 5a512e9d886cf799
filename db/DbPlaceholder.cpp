namespace gemmtune { void dbPlaceholder() {} }
