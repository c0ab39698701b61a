// What the agent pane's panels are made of: a titled part, laid out by the pane's grid.

/** A part of the agent pane: a section with its title, classed `part <className>`. */
export function part(title, className) {
  const box = document.createElement('section');
  box.className = `part ${className}`;
  const heading = document.createElement('h4');
  heading.textContent = title;
  box.append(heading);
  return box;
}
