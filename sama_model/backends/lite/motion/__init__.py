"""Between frames: optical flow and camera motion, a track's motion pattern, the main mover's action, activity."""
