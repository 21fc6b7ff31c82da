"""Live classes: the transcript as it is spoken, the slide on screen, and the class's progress."""
