namespace gemmtune { void tunerPlaceholder() {} }
