"""Re-identification: the main moving subject located, cut and described per frame or from its aligned stack."""
