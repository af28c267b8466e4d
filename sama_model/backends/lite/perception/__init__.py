"""One frame at a time: objects segmented by colour, their colour and shape names, frame features."""
