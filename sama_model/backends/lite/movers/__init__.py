"""What moves on its own under a moving camera: registration, background subtraction, the count, the actor."""
