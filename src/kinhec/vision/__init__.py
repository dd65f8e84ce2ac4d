"""Images: target detection, pairing of images with hand poses, and rendered images of generated sequences."""
