"""The shape every model batch is filled to, so that no answer depends on what shares its batch: /api/compare's
passes (app.services.compare), the float64 reruns (app.services.twins) and the ablation's.

On this CPU torch, a row's numbers depend on the batch's shape at rounding level (~5e-6): the matmul kernels change
below about 6 rows (the output head, one position per row) and below 16 positions in all (the blocks). From 8 rows and
16 positions up to 128 rows they agree bitwise, so every batch is filled up to there, alone or not."""

MIN_ROWS, MIN_POSITIONS = 8, 16
MAX_ROWS, MAX_POSITIONS = 128, 2048  # a batch's bounds: rows, and rows x padded length


def fill_rows(rows: list, T: int) -> list:
    """rows followed by copies of the last one up to at least MIN_ROWS rows and MIN_POSITIONS positions in
    all: the batch shape from which answers no longer depend on what shares their batch."""
    return rows + rows[-1:] * (max(MIN_ROWS, -(-MIN_POSITIONS // T)) - len(rows))
